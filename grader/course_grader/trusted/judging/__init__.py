"""Deciding verdicts on the trusted side: the wire format read back from the kernel, the case sets, the checks' engine (cases, draws, comparisons, judging) and the static flags."""
