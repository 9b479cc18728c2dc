"""The ``kuota`` command."""
