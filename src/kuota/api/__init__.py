"""Object kinds: parse, default, validate (clear errors), export CRD schemas. Pure."""
