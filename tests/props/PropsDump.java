import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The reference side of tests/props/compare.sh: loads each file with
 * java.util.Properties and prints what it holds, in the format that
 * tests/tools/propsdump.c reproduces from src/config/props.c.
 *
 * Usage: java tests/props/PropsDump.java FILE... (single-file launch, Java 11+)
 *
 * For each file: a line "== FILE", then either one line "KEY=VALUE" per entry,
 * sorted by the escaped key, or the line "ERROR" when loading fails (the
 * reason goes to stderr). Exit status 1 when any file failed.
 *
 * Escaping: each UTF-16 unit outside printable ASCII, and '\' and '=', is
 * written as backslash-u and four upper-case hex digits, so the output is
 * ASCII and the key/value boundary is the first '='.
 *
 * Strictness, to mirror the contract of src/config/props.h: bytes are decoded as
 * UTF-8 with CodingErrorAction.REPORT (Properties.load(Reader) with a lenient
 * reader would substitute U+FFFD), and a key or value holding U+0000 or an
 * unpaired surrogate is an error, even when a later line replaces it (a Java
 * String can hold them, a UTF-8 C string cannot).
 */
public class PropsDump {
	public static void main(String[] args) throws IOException {
		StringBuilder out = new StringBuilder();
		int status = 0;

		for (String file : args) {
			out.append("== ").append(file).append('\n');
			try {
				dump(load(file), out);
			} catch (IOException | IllegalArgumentException e) {
				System.err.println(file + ": " + e);
				out.append("ERROR\n");
				status = 1;
			}
		}
		System.out.print(out);
		System.out.flush();
		System.exit(status);
	}

	static Properties load(String file) throws IOException {
		CharsetDecoder dec = StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT);
		/* load() calls put() for every logical line, so an entry that a
		 * later duplicate replaces is checked too, as in props.c. */
		Properties p = new Properties() {
			@Override
			public synchronized Object put(Object key, Object value) {
				strict((String) key);
				strict((String) value);
				return super.put(key, value);
			}
		};

		try (Reader r = new InputStreamReader(Files.newInputStream(Paths.get(file)), dec)) {
			p.load(r);
		}
		return p;
	}

	static void strict(String s) {
		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);

			if (c == 0)
				throw new IllegalArgumentException("strict: U+0000");
			if (Character.isHighSurrogate(c) && i + 1 < s.length()
					&& Character.isLowSurrogate(s.charAt(i + 1)))
				i++;
			else if (Character.isSurrogate(c))
				throw new IllegalArgumentException("strict: unpaired surrogate");
		}
	}

	static void dump(Properties p, StringBuilder out) {
		TreeMap<String, String> sorted = new TreeMap<>();

		for (Map.Entry<Object, Object> e : p.entrySet())
			sorted.put(escape((String) e.getKey()), escape((String) e.getValue()));
		for (Map.Entry<String, String> e : sorted.entrySet())
			out.append(e.getKey()).append('=').append(e.getValue()).append('\n');
	}

	static String escape(String s) {
		StringBuilder b = new StringBuilder();

		for (int i = 0; i < s.length(); i++) {
			char c = s.charAt(i);

			if (c >= 0x20 && c <= 0x7e && c != '\\' && c != '=')
				b.append(c);
			else
				b.append(String.format("\\u%04X", (int) c));
		}
		return b.toString();
	}
}
