"""The web calculator: one form with every SPEC §1 field, the answer on the
same page with its explanation, and a printable determination. Spanish by
default, English on request. `diferida.web.routes.router` is included by the
service (`diferida.service.app.create_app`)."""
