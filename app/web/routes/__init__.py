"""The routers: each module serves one resource's pages and their JSON twins. Routers share the web layer's
state and presenters, never each other (an import contract in pyproject.toml says so)."""
