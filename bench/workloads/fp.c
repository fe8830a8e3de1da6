// fp: a CPU-bound floating-point workload (n-body steps, a small matrix
// multiply, libm calls) for the speed comparison.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NB 64
#define M 96
static double px[NB], py[NB], pz[NB], vx[NB], vy[NB], vz[NB], ms[NB];
static double a[M][M], b[M][M], c[M][M];

int main(int argc, char **argv) {
	int steps = argc > 1 ? atoi(argv[1]) : 400;
	for (int i = 0; i < NB; i++) {
		px[i] = sin(i) * 10; py[i] = cos(i * 1.3) * 10; pz[i] = sin(i * 0.7);
		vx[i] = vy[i] = vz[i] = 0; ms[i] = 1 + (i % 7) * 0.1;
	}
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < NB; i++)
			for (int j = 0; j < NB; j++) {
				if (i == j) continue;
				double dx = px[j] - px[i], dy = py[j] - py[i], dz = pz[j] - pz[i];
				double d2 = dx * dx + dy * dy + dz * dz + 0.01;
				double f = ms[j] / (d2 * sqrt(d2));
				vx[i] += dx * f * 1e-3; vy[i] += dy * f * 1e-3; vz[i] += dz * f * 1e-3;
			}
		for (int i = 0; i < NB; i++) { px[i] += vx[i]; py[i] += vy[i]; pz[i] += vz[i]; }
	}
	for (int i = 0; i < M; i++)
		for (int j = 0; j < M; j++) { a[i][j] = exp(-(i + j) * 0.01); b[i][j] = log(1 + i * j); }
	for (int r = 0; r < 3; r++)
		for (int i = 0; i < M; i++)
			for (int j = 0; j < M; j++) {
				double t = 0;
				for (int k = 0; k < M; k++) t += a[i][k] * b[k][j];
				c[i][j] = t;
			}
	double e = 0;
	for (int i = 0; i < NB; i++) e += px[i] * py[i] - pz[i];
	printf("%.9e %.9e\n", e, c[M / 2][M / 3]);
	return 0;
}
