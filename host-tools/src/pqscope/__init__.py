"""pqscope host tool: build, run and measure post-quantum signature firmware."""
