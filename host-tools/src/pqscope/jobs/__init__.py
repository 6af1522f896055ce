"""Work made of many measurements: the main job's suite, Falcon's modes compared, the matrix of
builds, the timing model's check and the emulator's benchmark."""
