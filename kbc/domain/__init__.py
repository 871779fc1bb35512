"""Models, ids, errors and settings: the layer every other layer may use."""
