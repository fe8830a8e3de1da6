# Hashes and arithmetic (tuning set).
my $n = shift;
my %h; my $acc = 0;
for my $i (1 .. $n) {
    $acc = ($acc * 33 + $i) % 999983;
    $h{$acc % 5000} += $i;
}
my $s = 0; $s += $h{$_} for sort { $a <=> $b } keys %h;
print "$acc $s\n";
