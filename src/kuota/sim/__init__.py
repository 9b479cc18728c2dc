"""Scenarios and traces in, reports out."""
