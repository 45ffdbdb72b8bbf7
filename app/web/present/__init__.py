"""Presenters: what a page or twin says of a session, its rows and its requests (views, twins, interface
strings and wording, windows of rendered rows). They read the sessions layer's values; the routers hand
what they make to the templates and the JSON twins."""
