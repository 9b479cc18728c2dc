"""sparkoperator.k8s.io: Spark Operator's SparkApplication."""
