// iostreams: formatting flags and manipulators, string streams, parsing
// std::cin (the harness feeds numbers and words), std::cerr/std::clog.
#include <iomanip>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

int main()
{
	std::cout << "precision:";
	for (int p = 1; p <= 17; p += 4)
		std::cout << ' ' << std::setprecision(p) << 3.14159265358979323846;
	std::cout << '\n';
	std::cout << std::fixed << std::setprecision(3) << "fixed " << 2.0 / 3 << ' ' << 1e10 << ' ' << -0.0005 << '\n';
	std::cout << std::scientific << std::setprecision(4) << "scientific " << 123456.789 << ' ' << 1e-300 << '\n';
	std::cout << std::hexfloat << "hexfloat " << 0.1 << '\n';
	std::cout << std::defaultfloat << std::setprecision(6) << "default " << 0.1 << ' ' << 1e21 << ' ' << 100.0 << '\n';
	std::cout << "hex " << std::hex << 255 << ' ' << std::showbase << 255 << ' ' << std::uppercase << 48879
		  << std::nouppercase << std::noshowbase << std::dec << '\n';
	std::cout << "oct " << std::oct << 8 << ' ' << std::showbase << 64 << std::noshowbase << std::dec << '\n';
	std::cout << "width [" << std::setw(8) << 42 << "] [" << std::left << std::setw(8) << 42 << "] [" << std::right
		  << std::setfill('*') << std::setw(8) << -42 << "] [" << std::internal << std::setw(8) << -42 << "]"
		  << std::setfill(' ') << '\n';
	std::cout << std::boolalpha << "bool " << true << ' ' << false << std::noboolalpha << ' ' << true << '\n';
	std::cout << std::showpos << "showpos " << 5 << ' ' << 0 << ' ' << 2.5 << std::noshowpos << '\n';
	std::cout << "limits " << std::numeric_limits<long long>::min() << ' ' << std::numeric_limits<unsigned long>::max()
		  << ' ' << std::numeric_limits<double>::max() << ' ' << std::numeric_limits<float>::epsilon() << '\n';
	std::cout << "chars " << 'x' << ' ' << static_cast<int>('x') << ' ' << static_cast<signed char>(65) << '\n';

	std::ostringstream os;
	os << std::setw(5) << std::setfill('0') << 42 << '|' << std::setprecision(2) << std::fixed << 3.14159;
	std::cout << "ostringstream [" << os.str() << "]\n";
	std::istringstream is("10 20.5 word 0x1f 077 -3 trailing");
	int a;
	double b;
	std::string w;
	int h, o, neg;
	is >> a >> b >> w >> std::hex >> h >> std::oct >> o >> std::dec >> neg;
	std::cout << "parsed " << a << ' ' << b << ' ' << w << ' ' << h << ' ' << o << ' ' << neg << " good=" << is.good()
		  << '\n';
	int bad;
	is >> bad;
	std::cout << "parse word as int: fail=" << is.fail() << '\n';
	is.clear();
	std::string rest;
	std::getline(is, rest);
	std::cout << "rest [" << rest << "]\n";

	// stdin: a count, then that many numbers, then free text lines.
	int n = 0;
	std::cin >> n;
	std::vector<double> xs;
	double sum = 0;
	for (int i = 0; i < n; i++) {
		double x;
		if (!(std::cin >> x))
			break;
		xs.push_back(x);
		sum += x;
	}
	std::cout << "read " << xs.size() << " numbers, sum=" << std::setprecision(4) << sum << '\n';
	std::string line;
	std::getline(std::cin, line); // rest of the numbers line
	int ln = 0;
	while (std::getline(std::cin, line)) {
		std::istringstream ls(line);
		std::string word;
		int words = 0;
		while (ls >> word)
			words++;
		std::cout << "line " << ++ln << ": " << words << " words, " << line.size() << " chars\n";
	}
	std::cout << "cin eof=" << std::cin.eof() << '\n';
	std::cerr << "this goes to stderr\n";
	std::clog << "and so does this\n";
	std::cout << std::flush;
	std::cout << "endl flushes" << std::endl;
	return 0;
}
