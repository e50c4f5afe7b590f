"""The command line: `papercode serve | call | check | materialize | config | archive`, each command's one-line failure.

Process-wide policy (the GC's thresholds, signals, scratch clean-up) is set here, at a command's start, never in the
library code below that also runs in reload threads.
"""
