"""What Kueue's Kubeflow training-job integrations share
(``pkg/controller/jobs/kubeflow/kubeflowjob``): one adapter, parametrised by
the kind. Each kind is its own integration package (``pytorchjob``,
``tfjob``, ``paddlejob``, ``xgboostjob``, ``jaxjob``)."""
