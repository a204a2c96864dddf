"""The browser dashboard (DESIGN §6): server-rendered pages with htmx fragments.

Access rules live in `memory.dashboard.views.base`; how to add a page is in its docstring.
"""
