"""controller-runtime in miniature: informer caches fed by watches, work queues, the
manager that reconciles until an instant settles, clocks (virtual or real), the event recorder."""
