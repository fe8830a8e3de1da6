# Regular expressions over stdin (check set).
my %c; my $lines = 0;
while (my $l = <STDIN>) {
    $lines++;
    while ($l =~ /\b(t\w+|\w+ing|re\w+)\b/g) { $c{$1}++ }
    $l =~ s/(\w)(\w*)/\U$1\E$2/g;
    $c{caps} += length($l);
}
print "$lines\n";
print "$_ $c{$_}\n" for (sort keys %c)[0..9];
