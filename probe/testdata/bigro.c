// bigro: 64 KiB of read-only data, all 0xab (see staticamb.c).
const unsigned char big[1 << 16] = {[0 ...(1 << 16) - 1] = 0xab};

int main(void) { return big[12345] == 0xab ? 0 : 1; }
