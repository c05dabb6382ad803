"""The consumer group protocol (KIP-848): server-side assignment, member epochs.

A consumer group, beside the classic groups of `groupctl.coordinator.classic`: the coordinator,
not a client leader, computes each member's target assignment (`assignors`), and members
reconcile towards it one heartbeat at a time, fenced by member epochs instead of generations.
"""
