"""What a measurement runs on: the virtual board (the emulator on a pty, also served as a serial
device), serial boards flashed with OpenOCD, and the boards of a labgrid farm."""
