"""Deciding verdicts on the trusted side: the wire format read back from the kernel, the case sets, the checks' framework and the static flags."""
