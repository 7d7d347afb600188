package grammar

// Grammars for the string formats of JSON Schema's format vocabulary.
// date, time and date-time follow RFC 3339 (leap years exact; a leap
// second only as 23:59:60 in UTC), ipv4 and ipv6 RFC 2673/4291 text forms,
// uuid RFC 4122, hostname RFC 1123 labels, email a dot-atom local part and
// a hostname or bracketed address, uri the RFC 3986 character set with a
// scheme. Where a grammar admits more than the format it says so in a
// relaxation.

// formatContent returns the string content for a format, with the bounds
// of its length in code points. Unknown formats are relaxed.
func (c *compiler) formatContent(name, ptr string) (*gnode, int, int) {
	switch name {
	case "date":
		return ref(dateRule), 10, 10
	case "time":
		return ref(timeRule), 9, -1
	case "date-time":
		return ref(dateTimeRule), 20, -1
	case "uuid":
		return ref(uuidRule), 36, 36
	case "ipv4":
		return ref(ipv4Rule), 7, 15
	case "ipv6":
		return ref(ipv6Rule), 2, 45
	case "hostname":
		c.relaxf(ptr, "format", "hostname: each label is checked, the 253-character total is not")
		return ref(hostnameRule), 1, -1
	case "email":
		c.relaxf(ptr, "format", "email: lengths are not checked (the local part's 64 characters, the address's 254, the domain's total)")
		return ref(emailRule), 3, -1
	case "uri":
		c.relaxf(ptr, "format", "uri: a scheme and RFC 3986 characters are checked, not the full URI syntax")
		return ref(uriRule), 2, -1
	case "uri-template":
		return ref(uriTemplateRule), 0, -1
	}
	c.relaxf(ptr, "format", "format %q is not enforced by the grammar", name)
	return nil, 0, -1
}

func digits(n int) *gnode   { return rep(digitClass, n, n) }
func rr(lo, hi rune) *gnode { return class(crange{Lo: lo, Hi: hi}) }

var (
	// Four-digit years divisible by 4 (and by 400 for centuries).
	leapYear = alt(
		seq(digits(2), alt(seq(lit("0"), class(crange{Lo: '4', Hi: '4'}, crange{Lo: '8', Hi: '8'})),
			seq(class(crange{Lo: '2', Hi: '2'}, crange{Lo: '4', Hi: '4'}, crange{Lo: '6', Hi: '6'}, crange{Lo: '8', Hi: '8'}), class(crange{Lo: '0', Hi: '0'}, crange{Lo: '4', Hi: '4'}, crange{Lo: '8', Hi: '8'})),
			seq(class(crange{Lo: '1', Hi: '1'}, crange{Lo: '3', Hi: '3'}, crange{Lo: '5', Hi: '5'}, crange{Lo: '7', Hi: '7'}, crange{Lo: '9', Hi: '9'}), class(crange{Lo: '2', Hi: '2'}, crange{Lo: '6', Hi: '6'})))),
		seq(alt(seq(lit("0"), class(crange{Lo: '0', Hi: '0'}, crange{Lo: '4', Hi: '4'}, crange{Lo: '8', Hi: '8'})),
			seq(class(crange{Lo: '2', Hi: '2'}, crange{Lo: '4', Hi: '4'}, crange{Lo: '6', Hi: '6'}, crange{Lo: '8', Hi: '8'}), class(crange{Lo: '0', Hi: '0'}, crange{Lo: '4', Hi: '4'}, crange{Lo: '8', Hi: '8'})),
			seq(class(crange{Lo: '1', Hi: '1'}, crange{Lo: '3', Hi: '3'}, crange{Lo: '5', Hi: '5'}, crange{Lo: '7', Hi: '7'}, crange{Lo: '9', Hi: '9'}), class(crange{Lo: '2', Hi: '2'}, crange{Lo: '6', Hi: '6'}))), lit("00")),
	)
	day28    = alt(seq(lit("0"), rr('1', '9')), seq(lit("1"), rr('0', '9')), seq(lit("2"), rr('0', '8')))
	dateRule = &grule{hint: "date", body: alt(
		seq(digits(4), lit("-"), alt(
			seq(alt(lit("01"), lit("03"), lit("05"), lit("07"), lit("08"), lit("10"), lit("12")), lit("-"), alt(day28, lit("29"), lit("30"), lit("31"))),
			seq(alt(lit("04"), lit("06"), lit("09"), lit("11")), lit("-"), alt(day28, lit("29"), lit("30"))),
			seq(lit("02-"), day28))),
		seq(leapYear, lit("-02-29")),
	)}
	hour     = alt(seq(rr('0', '1'), rr('0', '9')), seq(lit("2"), rr('0', '3')))
	minute   = seq(rr('0', '5'), rr('0', '9'))
	secFrac  = opt(seq(lit("."), plus(rr('0', '9'))))
	utc      = alt(class(crange{Lo: 'Z', Hi: 'Z'}, crange{Lo: 'z', Hi: 'z'}), lit("+00:00"), lit("-00:00"))
	offset   = alt(class(crange{Lo: 'Z', Hi: 'Z'}, crange{Lo: 'z', Hi: 'z'}), seq(class(crange{Lo: '+', Hi: '+'}, crange{Lo: '-', Hi: '-'}), hour, lit(":"), minute))
	timeRule = &grule{hint: "time", body: alt(
		seq(hour, lit(":"), minute, lit(":"), minute, secFrac, offset),
		seq(lit("23:59:60"), secFrac, utc),
	)}
	dateTimeRule = &grule{hint: "date-time", body: seq(ref(dateRule), class(crange{Lo: 'T', Hi: 'T'}, crange{Lo: 't', Hi: 't'}), ref(timeRule))}

	hex4     = func(n int) *gnode { return rep(class(hexRanges...), n, n) }
	uuidRule = &grule{hint: "uuid", body: seq(hex4(8), lit("-"), hex4(4), lit("-"), hex4(4), lit("-"), hex4(4), lit("-"), hex4(12))}

	decOctet = alt(rr('0', '9'), seq(rr('1', '9'), rr('0', '9')), seq(lit("1"), digits(2)),
		seq(lit("2"), rr('0', '4'), rr('0', '9')), seq(lit("25"), rr('0', '5')))
	ipv4Rule = &grule{hint: "ipv4", body: seq(decOctet, lit("."), decOctet, lit("."), decOctet, lit("."), decOctet)}

	h16      = rep(class(hexRanges...), 1, 4)
	h16c     = seq(h16, lit(":"))
	ls32     = alt(seq(h16, lit(":"), h16), ref(ipv4Rule))
	ipv6Rule = &grule{hint: "ipv6", body: alt(
		seq(rep(h16c, 6, 6), ls32),
		seq(lit("::"), rep(h16c, 5, 5), ls32),
		seq(opt(h16), lit("::"), rep(h16c, 4, 4), ls32),
		seq(opt(seq(rep(h16c, 0, 1), h16)), lit("::"), rep(h16c, 3, 3), ls32),
		seq(opt(seq(rep(h16c, 0, 2), h16)), lit("::"), rep(h16c, 2, 2), ls32),
		seq(opt(seq(rep(h16c, 0, 3), h16)), lit("::"), h16c, ls32),
		seq(opt(seq(rep(h16c, 0, 4), h16)), lit("::"), ls32),
		seq(opt(seq(rep(h16c, 0, 5), h16)), lit("::"), h16),
		seq(opt(seq(rep(h16c, 0, 6), h16)), lit("::")),
	)}

	alnum        = class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'})
	label        = seq(alnum, opt(seq(rep(class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'}, crange{Lo: '-', Hi: '-'}), 0, 61), alnum)))
	hostnameRule = &grule{hint: "hostname", body: seq(label, star(seq(lit("."), label)))}

	atext   = class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'}, crange{Lo: '!', Hi: '!'}, crange{Lo: '#', Hi: '\''}, crange{Lo: '*', Hi: '+'}, crange{Lo: '-', Hi: '-'}, crange{Lo: '/', Hi: '/'}, crange{Lo: '=', Hi: '='}, crange{Lo: '?', Hi: '?'}, crange{Lo: '^', Hi: '`'}, crange{Lo: '{', Hi: '~'})
	dotAtom = seq(plus(atext), star(seq(lit("."), plus(atext))))
	qtext   = class(crange{Lo: ' ', Hi: '!'}, crange{Lo: '#', Hi: '['}, crange{Lo: ']', Hi: '~'})
	// A quoted local part holds no quoted-pair: the gateway's validator
	// refuses a backslash or a quote inside the quotes.
	quoted    = seq(lit(`\"`), star(qtext), lit(`\"`))
	emailRule = &grule{hint: "email", body: seq(alt(dotAtom, quoted), lit("@"), alt(ref(hostnameRule), seq(lit("["), ref(ipv4Rule), lit("]")), seq(lit("[IPv6:"), ref(ipv6Rule), lit("]"))))}

	uriChar = alt(class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'}, crange{Lo: '-', Hi: '-'}, crange{Lo: '.', Hi: '.'}, crange{Lo: '_', Hi: '_'}, crange{Lo: '~', Hi: '~'},
		crange{Lo: ':', Hi: ':'}, crange{Lo: '/', Hi: '/'}, crange{Lo: '?', Hi: '?'}, crange{Lo: '#', Hi: '#'}, crange{Lo: '[', Hi: '['}, crange{Lo: ']', Hi: ']'}, crange{Lo: '@', Hi: '@'},
		crange{Lo: '!', Hi: '!'}, crange{Lo: '$', Hi: '$'}, crange{Lo: '&', Hi: '&'}, crange{Lo: '\'', Hi: '\''}, crange{Lo: '(', Hi: '('}, crange{Lo: ')', Hi: ')'}, crange{Lo: '*', Hi: '*'},
		crange{Lo: '+', Hi: '+'}, crange{Lo: ',', Hi: ','}, crange{Lo: ';', Hi: ';'}, crange{Lo: '=', Hi: '='}),
		seq(lit("%"), class(hexRanges...), class(hexRanges...)), lit(`\/`))
	// RFC 6570: literals and {expressions}; in JSON '/' may also be "\/".
	pctEnc      = seq(lit("%"), class(hexRanges...), class(hexRanges...))
	tmplLiteral = alt(class(crange{Lo: '!', Hi: '!'}, crange{Lo: '#', Hi: '$'}, crange{Lo: '&', Hi: ';'}, crange{Lo: '=', Hi: '='}, crange{Lo: '?', Hi: '['},
		crange{Lo: ']', Hi: ']'}, crange{Lo: '_', Hi: '_'}, crange{Lo: 'a', Hi: 'z'}, crange{Lo: '~', Hi: '~'}, crange{Lo: 0xA0, Hi: 0xD7FF}, crange{Lo: 0xE000, Hi: 0xFFFD}, crange{Lo: 0x10000, Hi: 0x10FFFF}),
		pctEnc, lit(`\/`))
	varchar         = alt(class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: '_', Hi: '_'}, crange{Lo: 'a', Hi: 'z'}), pctEnc)
	varspec         = seq(varchar, star(seq(opt(lit(".")), varchar)), opt(alt(seq(lit(":"), rr('1', '9'), rep(rr('0', '9'), 0, 3)), lit("*"))))
	tmplExpression  = seq(lit("{"), opt(class(crange{Lo: '+', Hi: '+'}, crange{Lo: '#', Hi: '#'}, crange{Lo: '.', Hi: '.'}, crange{Lo: '/', Hi: '/'}, crange{Lo: ';', Hi: ';'}, crange{Lo: '?', Hi: '?'}, crange{Lo: '&', Hi: '&'}, crange{Lo: '=', Hi: '='}, crange{Lo: ',', Hi: ','}, crange{Lo: '!', Hi: '!'}, crange{Lo: '@', Hi: '@'}, crange{Lo: '|', Hi: '|'})), varspec, star(seq(lit(","), varspec)), lit("}"))
	uriTemplateRule = &grule{hint: "uri-template", body: star(alt(tmplLiteral, tmplExpression))}

	uriRule = &grule{hint: "uri", body: seq(class(crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'}),
		star(class(crange{Lo: '0', Hi: '9'}, crange{Lo: 'A', Hi: 'Z'}, crange{Lo: 'a', Hi: 'z'}, crange{Lo: '+', Hi: '+'}, crange{Lo: '-', Hi: '-'}, crange{Lo: '.', Hi: '.'})),
		lit(":"), star(uriChar))}
)
