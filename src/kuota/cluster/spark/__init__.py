"""Spark Operator (kubeflow/spark-operator) in the embedded cluster."""
