"""cli: the ``kbc`` command."""
