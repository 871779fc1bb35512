"""services: wiring of the passes into the operations the CLI and API offer."""
