"""What the project is, read from the repository: where it is, its boards, its scheme catalogue,
its toolchains and the images built from them; the errors every room reports. The ground floor:
it imports no other room."""
