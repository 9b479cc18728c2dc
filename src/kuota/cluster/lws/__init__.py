"""The LeaderWorkerSet operator (sigs.k8s.io/lws), LWS's own controller
manager: its set controller (``lws_controller``), pod controller
(``lws_pod_controller``), the objects they build (``lws_objects``) and its
webhooks (``lws_webhooks``). Kueue's LWS integration is elsewhere
(``kuota.controllers.jobs.leaderworkerset``)."""
