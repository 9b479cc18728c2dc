"""kuota's own API group ``kuota.dev``: kinds that exist only in kuota (the
NodeOperation of a world), with their argument syntax. A new kind of kuota's own
is a module here plus its declaration in ``kuota_kinds``."""
