"""dsh-inspect: a web inspector for deepseek-harness session logs."""
