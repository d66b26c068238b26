// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* x86_insn: x86-64 instruction lengths and control flow; see x86_insn.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "symbolize/x86_insn.h"

/* How an opcode's immediate is sized. */
enum imm {
	IMM_NONE,
	IMM_B,		/* 1 byte */
	IMM_W,		/* 2 bytes */
	IMM_Z,		/* 4 bytes, 2 with an operand-size prefix */
	IMM_V,		/* mov r, imm: 8 with REX.W, 2 with 66, else 4 */
	IMM_WB,		/* enter: 2 + 1 */
	IMM_MOFFS,	/* mov al, [moffs]: an 8-byte address, 4 with 67 */
	IMM_REL8,	/* a branch's 1-byte displacement */
	IMM_REL32,	/* a branch's 4-byte displacement */
};

struct op {
	bool invalid;
	bool modrm;
	enum imm imm;
	enum x86_flow flow;
};

/* The one-byte map, in 64-bit mode. */
static struct op one_byte(uint8_t b)
{
	struct op o = { 0 };

	if (b < 0x40) {
		switch (b & 7) {
		case 0: case 1: case 2: case 3:
			o.modrm = true;
			break;
		case 4:
			o.imm = IMM_B;
			break;
		case 5:
			o.imm = IMM_Z;
			break;
		default:
			/* push/pop es/cs/ss/ds, daa, das, aaa, aas: gone in 64-bit mode */
			o.invalid = true;
		}
		return o;
	}
	if (b >= 0x50 && b <= 0x5f)
		return o;
	if (b >= 0x70 && b <= 0x7f) {
		o.imm = IMM_REL8;
		o.flow = X86_FLOW_JCC;
		return o;
	}
	if (b >= 0x84 && b <= 0x8f) {
		o.modrm = true;
		return o;
	}
	if (b >= 0x90 && b <= 0x99)
		return o;
	if (b >= 0xb0 && b <= 0xb7) {
		o.imm = IMM_B;
		return o;
	}
	if (b >= 0xb8 && b <= 0xbf) {
		o.imm = IMM_V;
		return o;
	}
	if (b >= 0xd8 && b <= 0xdf) {	/* x87 */
		o.modrm = true;
		return o;
	}
	switch (b) {
	case 0x63:			/* movsxd */
		o.modrm = true;
		break;
	case 0x68:
		o.imm = IMM_Z;
		break;
	case 0x69:
		o.modrm = true;
		o.imm = IMM_Z;
		break;
	case 0x6a:
		o.imm = IMM_B;
		break;
	case 0x6b:
		o.modrm = true;
		o.imm = IMM_B;
		break;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:
		break;
	case 0x80: case 0x83: case 0xc0: case 0xc1: case 0xc6:
		o.modrm = true;
		o.imm = IMM_B;
		break;
	case 0x81: case 0xc7:
		o.modrm = true;
		o.imm = IMM_Z;
		break;
	case 0x9b: case 0x9c: case 0x9d: case 0x9e: case 0x9f:
		break;
	case 0xa0: case 0xa1: case 0xa2: case 0xa3:
		o.imm = IMM_MOFFS;
		break;
	case 0xa4: case 0xa5: case 0xa6: case 0xa7:
	case 0xaa: case 0xab: case 0xac: case 0xad: case 0xae: case 0xaf:
		break;
	case 0xa8:
		o.imm = IMM_B;
		break;
	case 0xa9:
		o.imm = IMM_Z;
		break;
	case 0xc2:
		o.imm = IMM_W;
		o.flow = X86_FLOW_RET;
		break;
	case 0xc3:
		o.flow = X86_FLOW_RET;
		break;
	case 0xc8:
		o.imm = IMM_WB;
		break;
	case 0xc9:
		break;
	case 0xca:
		o.imm = IMM_W;
		o.flow = X86_FLOW_RET;
		break;
	case 0xcb: case 0xcf:
		o.flow = X86_FLOW_RET;
		break;
	case 0xcc:
		o.flow = X86_FLOW_STOP;
		break;
	case 0xcd:
		o.imm = IMM_B;
		break;
	case 0xd0: case 0xd1: case 0xd2: case 0xd3:
		o.modrm = true;
		break;
	case 0xd7:
		break;
	case 0xe0: case 0xe1: case 0xe2: case 0xe3:	/* loop, jrcxz */
		o.imm = IMM_REL8;
		o.flow = X86_FLOW_JCC;
		break;
	case 0xe4: case 0xe5: case 0xe6: case 0xe7:
		o.imm = IMM_B;
		break;
	case 0xe8:
		o.imm = IMM_REL32;
		o.flow = X86_FLOW_CALL;
		break;
	case 0xe9:
		o.imm = IMM_REL32;
		o.flow = X86_FLOW_JMP;
		break;
	case 0xeb:
		o.imm = IMM_REL8;
		o.flow = X86_FLOW_JMP;
		break;
	case 0xec: case 0xed: case 0xee: case 0xef: case 0xf1: case 0xf5:
	case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
		break;
	case 0xf4:
		o.flow = X86_FLOW_STOP;
		break;
	case 0xf6: case 0xf7: case 0xfe: case 0xff:
		/* the immediate of test (f6/f7 /0 /1) and ff's flow depend on ModRM.reg */
		o.modrm = true;
		break;
	default:
		/* 06 07 ... 60 61 62(EVEX, handled before) 82 9a c4 c5 ce d4 d5 d6 ea */
		o.invalid = true;
	}
	return o;
}

/* The 0F map. */
static struct op two_byte(uint8_t b)
{
	struct op o = { .modrm = true };

	if (b >= 0x80 && b <= 0x8f) {
		o.modrm = false;
		o.imm = IMM_REL32;
		o.flow = X86_FLOW_JCC;
		return o;
	}
	if (b >= 0xc8 && b <= 0xcf) {	/* bswap */
		o.modrm = false;
		return o;
	}
	switch (b) {
	case 0x04: case 0x0a: case 0x0c: case 0x24: case 0x25: case 0x26: case 0x27:
	case 0x36: case 0x39: case 0x3b: case 0x3c: case 0x3d: case 0x3e: case 0x3f:
	case 0x7a: case 0x7b: case 0xa6: case 0xa7:
		o.invalid = true;
		break;
	case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0e:
	case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35: case 0x37:
	case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xaa:
		o.modrm = false;
		break;
	case 0x0b:			/* ud2 */
		o.modrm = false;
		o.flow = X86_FLOW_STOP;
		break;
	case 0x0f:			/* 3DNow!: ModRM, then the real opcode as an imm8 */
	case 0x70: case 0x71: case 0x72: case 0x73:
	case 0xa4: case 0xac: case 0xba: case 0xc2: case 0xc4: case 0xc5: case 0xc6:
		o.imm = IMM_B;
		break;
	default:
		break;
	}
	return o;
}

/* The VEX/EVEX-encoded 0F map: mostly as the legacy one, without the branches. */
static struct op vex_map1(uint8_t b)
{
	struct op o = { .modrm = true };

	if (b == 0x77)			/* vzeroupper, vzeroall */
		o.modrm = false;
	else if ((b >= 0x70 && b <= 0x73) || b == 0xc2 || (b >= 0xc4 && b <= 0xc6))
		o.imm = IMM_B;
	return o;
}

struct cursor {
	const uint8_t *p;
	size_t at, len;
};

static bool take(struct cursor *c, size_t n)
{
	if (n > c->len - c->at || c->at + n > X86_INSN_MAX)
		return false;
	c->at += n;
	return true;
}

static bool byte_at(const struct cursor *c, uint8_t *b)
{
	if (c->at >= c->len || c->at >= X86_INSN_MAX)
		return false;
	*b = c->p[c->at];
	return true;
}

/* ModRM, SIB and displacement (32- or 64-bit addressing alike); *m gets the ModRM byte. */
static bool modrm(struct cursor *c, uint8_t *m)
{
	uint8_t sib, mod, rm;

	if (!byte_at(c, m) || !take(c, 1))
		return false;
	mod = *m >> 6;
	rm = *m & 7;
	if (mod == 3)
		return true;
	if (rm == 4) {
		if (!byte_at(c, &sib) || !take(c, 1))
			return false;
		if (mod == 0 && (sib & 7) == 5)
			return take(c, 4);
	} else if (mod == 0 && rm == 5) {
		return take(c, 4);	/* rip-relative */
	}
	if (mod == 1)
		return take(c, 1);
	if (mod == 2)
		return take(c, 4);
	return true;
}

static int32_t rel_at(const uint8_t *p, size_t n)
{
	if (n == 1)
		return (int8_t)p[0];
	int32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int x86_insn__decode(const uint8_t *code, size_t len, struct x86_insn *out)
{
	struct cursor c = { .p = code, .len = len };
	bool opsize = false, addrsize = false, rex_w = false;
	struct op o;
	uint8_t b, m = 0, reg;
	bool legacy_map = false;	/* the one-byte map, where groups hide in ModRM.reg */
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	/* legacy prefixes, in any order */
	for (;;) {
		if (!byte_at(&c, &b))
			return -EINVAL;
		if (b == 0x66)
			opsize = true;
		else if (b == 0x67)
			addrsize = true;
		else if (b != 0xf0 && b != 0xf2 && b != 0xf3 && b != 0x2e && b != 0x36 &&
			 b != 0x3e && b != 0x26 && b != 0x64 && b != 0x65)
			break;
		take(&c, 1);
	}
	if ((b & 0xf0) == 0x40) {	/* REX: the last prefix */
		rex_w = b & 8;
		take(&c, 1);
		if (!byte_at(&c, &b))
			return -EINVAL;
	}
	if (b == 0xc5 || b == 0xc4 || b == 0x62) {
		/* VEX/EVEX: the prefix bytes say the map; no branch is so encoded */
		uint8_t map, p1;

		if (!byte_at(&c, &b))
			return -EINVAL;
		if (b == 0xc5) {
			map = 1;
			if (!take(&c, 2))
				return -EINVAL;
		} else {
			bool evex = b == 0x62;

			if (!take(&c, 1) || !byte_at(&c, &p1) || !take(&c, evex ? 3 : 2))
				return -EINVAL;
			map = p1 & (evex ? 0x07 : 0x1f);
		}
		if (!byte_at(&c, &b) || !take(&c, 1))
			return -EINVAL;
		if (map == 1) {
			o = vex_map1(b);
		} else if (map == 2 || map == 5 || map == 6) {
			o = (struct op){ .modrm = true };
		} else if (map == 3) {
			o = (struct op){ .modrm = true, .imm = IMM_B };
		} else {
			return -EINVAL;
		}
	} else if (b == 0x0f) {
		take(&c, 1);
		if (!byte_at(&c, &b) || !take(&c, 1))
			return -EINVAL;
		if (b == 0x38 || b == 0x3a) {
			bool imm = b == 0x3a;

			if (!take(&c, 1))	/* the third opcode byte */
				return -EINVAL;
			o = (struct op){ .modrm = true, .imm = imm ? IMM_B : IMM_NONE };
		} else {
			o = two_byte(b);
		}
	} else {
		take(&c, 1);
		o = one_byte(b);
		legacy_map = true;
	}
	if (o.invalid)
		return -EINVAL;
	if (o.modrm && !modrm(&c, &m))
		return -EINVAL;
	reg = (m >> 3) & 7;
	/* groups whose ModRM.reg changes the instruction: test's immediate, ff's flow */
	if (legacy_map && (b == 0xf6 || b == 0xf7) && reg <= 1)
		o.imm = b == 0xf6 ? IMM_B : IMM_Z;
	/* in the one-byte map's groups, the other ModRM.reg values are no instruction */
	if (legacy_map && (b == 0xc6 || b == 0xc7 || b == 0x8f) && reg != 0 &&
	    !(b != 0x8f && m == 0xf8))	/* xabort, xbegin */
		return -EINVAL;
	if (legacy_map && b == 0xfe && reg > 1)
		return -EINVAL;
	if (legacy_map && b == 0xff) {
		if (reg == 2 || reg == 3)
			o.flow = X86_FLOW_CALL_INDIRECT;
		else if (reg == 4 || reg == 5)
			o.flow = X86_FLOW_JMP_INDIRECT;
		else if (reg == 7)
			return -EINVAL;
	}
	switch (o.imm) {
	case IMM_NONE:
		break;
	case IMM_B:
	case IMM_REL8:
		n = 1;
		break;
	case IMM_W:
		n = 2;
		break;
	case IMM_Z:
		n = opsize && !rex_w ? 2 : 4;
		break;
	case IMM_V:
		n = rex_w ? 8 : opsize ? 2 : 4;
		break;
	case IMM_WB:
		n = 3;
		break;
	case IMM_MOFFS:
		n = addrsize ? 4 : 8;
		break;
	case IMM_REL32:
		n = 4;
		break;
	}
	if (!take(&c, n))
		return -EINVAL;
	out->length = (uint8_t)c.at;
	out->flow = o.flow;
	if (o.imm == IMM_REL8 || o.imm == IMM_REL32)
		out->target = (int64_t)c.at + rel_at(code + c.at - n, n);
	return 0;
}
