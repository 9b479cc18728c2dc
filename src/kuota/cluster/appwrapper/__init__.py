"""CodeFlare's AppWrapper operator in the embedded cluster: its validating
webhook and the controller that creates the wrapped objects."""
