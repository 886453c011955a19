"""The analyst's workbench: web pages (/analista) over the workflow of
`diferida.service.workflow`. `routes.router` is what the service mounts."""
