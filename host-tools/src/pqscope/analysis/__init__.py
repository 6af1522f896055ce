"""Whether signing time depends on a secret: the constant-time test (schedule, statistics,
sequential decision, verdict, the board's replay and its confirmation) and the exact check."""
