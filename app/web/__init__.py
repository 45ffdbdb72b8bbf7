"""The web layer: the FastAPI app, its pages and JSON twins, htmx partials, live tail and export."""
