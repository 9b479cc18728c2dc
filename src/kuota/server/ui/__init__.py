"""The live dashboard ``kuota serve`` serves at ``/ui``: static pages
(``static/``: HTML, CSS and plain JS, no build step, no CDN) that read the
API with the signed-in user's identity, so RBAC applies; the token login
that sets the session cookie (``sessions``); the routes (``routes``)."""
