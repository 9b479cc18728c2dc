"""One small adapter per job kind over ``kuota.controllers.jobframework``."""
