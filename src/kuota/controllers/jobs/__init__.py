"""Kueue's job integrations, one package each (as Kueue's
``pkg/controller/jobs/<kind>``), each exporting one
``kuota.controllers.integration.Integration``; ``registry`` lists them."""
