/* The host's SHA-256 and SHA-512 compressions against FIPS 180-4's examples (the NIST CSRC example
 * values): "abc" in one block, and the 448-bit message of two blocks, its padding made here. */
#include "compression.h"
#include "check.h"

#include <string.h>

static const uint8_t iv256[SHA256_STATE_BYTES] = {
	0x6a, 0x09, 0xe6, 0x67, 0xbb, 0x67, 0xae, 0x85, 0x3c, 0x6e, 0xf3, 0x72, 0xa5, 0x4f, 0xf5, 0x3a,
	0x51, 0x0e, 0x52, 0x7f, 0x9b, 0x05, 0x68, 0x8c, 0x1f, 0x83, 0xd9, 0xab, 0x5b, 0xe0, 0xcd, 0x19,
};
static const uint8_t iv512[SHA512_STATE_BYTES] = {
	0x6a, 0x09, 0xe6, 0x67, 0xf3, 0xbc, 0xc9, 0x08, 0xbb, 0x67, 0xae, 0x85, 0x84, 0xca, 0xa7, 0x3b,
	0x3c, 0x6e, 0xf3, 0x72, 0xfe, 0x94, 0xf8, 0x2b, 0xa5, 0x4f, 0xf5, 0x3a, 0x5f, 0x1d, 0x36, 0xf1,
	0x51, 0x0e, 0x52, 0x7f, 0xad, 0xe6, 0x82, 0xd1, 0x9b, 0x05, 0x68, 0x8c, 0x2b, 0x3e, 0x6c, 0x1f,
	0x1f, 0x83, 0xd9, 0xab, 0xfb, 0x41, 0xbd, 0x6b, 0x5b, 0xe0, 0xcd, 0x19, 0x13, 0x7e, 0x21, 0x79,
};

/* The message padded (FIPS 180-4, 5.1) to whole blocks of `block` bytes; its number of blocks. */
static unsigned padded(uint8_t *out, const char *message, unsigned block)
{
	unsigned len = (unsigned)strlen(message), length_bytes = block / 8;
	unsigned total = (len + 1 + length_bytes + block - 1) / block * block;
	memset(out, 0, total);
	memcpy(out, message, len);
	out[len] = 0x80;
	out[total - 2] = (uint8_t)(len * 8 >> 8), out[total - 1] = (uint8_t)(len * 8);
	return total / block;
}

static int same_hex(const uint8_t *bytes, const char *hex)
{
	char text[2 * SHA512_STATE_BYTES + 1];
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++)
		snprintf(text + 2 * i, 3, "%02x", bytes[i]);
	return !strcmp(text, hex);
}

static void check_sha256(const char *message, const char *digest)
{
	uint8_t state[SHA256_STATE_BYTES], blocks[2 * SHA256_BLOCK_BYTES];
	memcpy(state, iv256, sizeof state);
	sha256_blocks(state, blocks, padded(blocks, message, SHA256_BLOCK_BYTES));
	CHECK(same_hex(state, digest));
}

static void check_sha512(const char *message, const char *digest)
{
	uint8_t state[SHA512_STATE_BYTES], blocks[2 * SHA512_BLOCK_BYTES];
	memcpy(state, iv512, sizeof state);
	sha512_blocks(state, blocks, padded(blocks, message, SHA512_BLOCK_BYTES));
	CHECK(same_hex(state, digest));
}

int main(void)
{
	check_sha256("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	check_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	check_sha512("abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
			    "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
	check_sha512("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
		     "hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		     "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
		     "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
	/* no block: the state as it was */
	uint8_t state[SHA256_STATE_BYTES];
	memcpy(state, iv256, sizeof state);
	sha256_blocks(state, NULL, 0);
	CHECK(!memcmp(state, iv256, sizeof state));

	return check_summary("compression");
}
