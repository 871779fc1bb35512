"""views: typed documents built from the facts (architecture, module, workflow, ...)."""
