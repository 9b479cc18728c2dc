"""workload.codeflare.dev: CodeFlare's AppWrapper."""
