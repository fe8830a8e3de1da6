// liblate.so: dlopened by twins, so probes on late_fn bind late.
int late_fn(int x) { return x ^ 5; }
