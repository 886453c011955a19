"""The web calculator: one form with every rules §1 field, the answer on the
same page with its explanation, and a printable determination. Spanish by
default, English on request. `diferida.web.routes.router` and the analyst's
workbench (`diferida.web.workbench.routes.router`) are built on the service
and included in it by `diferida.server.create_app`."""
