package output

// NaturalLess orders strings with embedded numbers by value: "pg/2" < "pg/10", "0/lxd/9" < "0/lxd/10".
// Non-digit runs compare bytewise; equal numbers with more leading zeros sort later.
func NaturalLess(a, b string) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if isDigit(a[i]) && isDigit(b[j]) {
			ie, je := digitsEnd(a, i), digitsEnd(b, j)
			an, bn := trimZeros(a[i:ie]), trimZeros(b[j:je])
			if len(an) != len(bn) {
				return len(an) < len(bn)
			}
			if an != bn {
				return an < bn
			}
			if ie-i != je-j {
				return ie-i < je-j
			}
			i, j = ie, je
			continue
		}
		if a[i] != b[j] {
			return a[i] < b[j]
		}
		i++
		j++
	}
	return len(a)-i < len(b)-j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

func trimZeros(s string) string {
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}
