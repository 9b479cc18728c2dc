"""Kueue's admission webhooks over HTTPS (AdmissionReview v1) at Kueue's own
paths, answered by the admission hooks the embedded plane runs, and Kueue's
internal certificate management (a CA and serving certificate in a Secret,
the caBundle injected into the webhook configurations)."""
