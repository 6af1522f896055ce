"""The serial link to the harness firmware: the transport (a port, a pty, a pyserial URL), frames
on the wire, the protocol's messages and a session that sends commands and collects records."""
