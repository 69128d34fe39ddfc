import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Reader;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.data.Struct;
import org.apache.kafka.connect.data.Timestamp;
import org.apache.kafka.connect.file.FileStreamSourceTask;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.storage.Converter;
import org.apache.kafka.connect.storage.OffsetStorageReader;
import org.apache.kafka.connect.storage.StringConverter;

/**
 * The reference side of tests/convert/compare.sh: runs Kafka Connect's own
 * converters over tests/convert/lines.hex and tests/convert/structs.txt and
 * prints what they produce, in the format that tests/tools/convertdump.c
 * reproduces from src/convert/convert.c.
 *
 * Usage: java -cp LIBS/'*' ConnectDump.java LINES STRUCTS TMPDIR ZONE[,ZONE...]
 * (single-file launch; LIBS holds connect-json, connect-api, connect-file
 * 3.9.1 and their dependencies).
 *
 * Output, one item a line, bytes as lower-case hex ("null" for a null
 * result, "-" for no bytes):
 *   line N replaced K        malformed sequences the UTF-8 decoder replaced
 *   line N json HEX          JsonConverter, schemas.enable=false
 *   line N json-schema HEX   JsonConverter, schemas.enable=true
 *   line N string HEX        StringConverter
 *   struct N json|json-schema HEX
 *   struct N string@ZONE HEX StringConverter, JVM default time zone ZONE
 *   nullkey json|json-schema|string HEX
 * A struct's string form is "unmatched" when it has a non-null bytes field:
 * Struct.toString() prints a byte[] as its identity hash ("[B@1b6d3586").
 *
 * A line is decoded as FileStreamSourceTask decodes its file: UTF-8, each
 * malformed sequence replaced with U+FFFD. As a check of that model, the
 * lines that hold no CR or LF are also written to a file in TMPDIR and read
 * back through the real FileStreamSourceTask; the program fails when the
 * task's records differ from the lines decoded one by one.
 */
public class ConnectDump {
	static final String TOPIC = "skiff-test";

	public static void main(String[] args) throws Exception {
		if (args.length != 4) {
			System.err.println("usage: ConnectDump LINES STRUCTS TMPDIR ZONE[,ZONE...]");
			System.exit(2);
		}
		List<byte[]> lines = readLines(Paths.get(args[0]));
		List<String[]> structs = readStructs(Paths.get(args[1]));
		Converter json = json(false), jsonSchema = json(true);
		StringConverter string = new StringConverter();
		string.configure(Map.of("converter.type", "value"));
		StringBuilder out = new StringBuilder();
		List<String> decoded = new ArrayList<>();

		for (int i = 0; i < lines.size(); i++) {
			int[] replaced = {0};
			String s = decode(lines.get(i), replaced);
			String p = "line " + (i + 1) + " ";

			if (!s.equals(readerDecode(lines.get(i))))
				throw new IllegalStateException("line " + (i + 1) + ": decoders disagree");
			decoded.add(s);
			out.append(p).append("replaced ").append(replaced[0]).append('\n');
			emit(out, p + "json", json.fromConnectData(TOPIC, Schema.STRING_SCHEMA, s));
			emit(out, p + "json-schema", jsonSchema.fromConnectData(TOPIC, Schema.STRING_SCHEMA, s));
			emit(out, p + "string", string.fromConnectData(TOPIC, Schema.STRING_SCHEMA, s));
		}
		fileTaskCheck(lines, decoded, Paths.get(args[2]));
		for (int i = 0; i < structs.size(); i++) {
			String p = "struct " + (i + 1) + " ";
			Struct st = buildStruct(structs.get(i));

			emit(out, p + "json", json.fromConnectData(TOPIC, st.schema(), st));
			emit(out, p + "json-schema", jsonSchema.fromConnectData(TOPIC, st.schema(), st));
			for (String zone : args[3].split(",")) {
				/* Date.toString() prints in the default zone. */
				java.util.TimeZone.setDefault(java.util.TimeZone.getTimeZone(zone));
				if (hasBytes(st))
					out.append(p).append("string@").append(zone).append(" unmatched\n");
				else
					emit(out, p + "string@" + zone, string.fromConnectData(TOPIC, st.schema(), st));
			}
		}
		/* FileStreamSourceTask's key: no schema, no value. */
		emit(out, "nullkey json", json.fromConnectData(TOPIC, null, null));
		emit(out, "nullkey json-schema", jsonSchema.fromConnectData(TOPIC, null, null));
		emit(out, "nullkey string", string.fromConnectData(TOPIC, null, null));
		PrintStream ps = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
		ps.print(out);
		ps.flush();
	}

	static Converter json(boolean schemas) {
		JsonConverter c = new JsonConverter();
		c.configure(Map.of("schemas.enable", Boolean.toString(schemas), "converter.type", "value"));
		return c;
	}

	static void emit(StringBuilder out, String label, byte[] b) {
		out.append(label).append(' ');
		if (b == null)
			out.append("null");
		else if (b.length == 0)
			out.append('-');
		for (int i = 0; b != null && i < b.length; i++)
			out.append(Character.forDigit(b[i] >> 4 & 15, 16)).append(Character.forDigit(b[i] & 15, 16));
		out.append('\n');
	}

	/* ---- the corpus ---------------------------------------------------- */

	static String stripComment(String l) {
		int h = l.indexOf('#');
		return (h < 0 ? l : l.substring(0, h)).trim();
	}

	static byte[] hex(String tok) {
		int star = tok.indexOf('*');
		int n = star < 0 ? 1 : Integer.parseInt(tok.substring(star + 1));
		String h = star < 0 ? tok : tok.substring(0, star);
		if (h.equals("-"))
			h = "";
		if (h.length() % 2 != 0 || n < 0)
			throw new IllegalArgumentException("bad hex token: " + tok);
		byte[] one = new byte[h.length() / 2];
		for (int i = 0; i < one.length; i++)
			one[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16);
		byte[] all = new byte[one.length * n];
		for (int i = 0; i < n; i++)
			System.arraycopy(one, 0, all, i * one.length, one.length);
		return all;
	}

	static byte[] hexTokens(List<String> toks) {
		java.io.ByteArrayOutputStream b = new java.io.ByteArrayOutputStream();
		for (String t : toks)
			b.writeBytes(hex(t));
		return b.toByteArray();
	}

	static List<byte[]> readLines(Path p) throws IOException {
		List<byte[]> res = new ArrayList<>();
		for (String l : Files.readAllLines(p, StandardCharsets.UTF_8)) {
			String s = l.startsWith("#") ? "" : stripComment(l);
			if (!s.isEmpty())
				res.add(hexTokens(List.of(s.split("\\s+"))));
		}
		return res;
	}

	/* Each struct as its lines "struct ..." and "field ...", up to "end". */
	static List<String[]> readStructs(Path p) throws IOException {
		List<String[]> res = new ArrayList<>();
		List<String> cur = null;
		for (String l : Files.readAllLines(p, StandardCharsets.UTF_8)) {
			String s = l.startsWith("#") ? "" : stripComment(l);
			if (s.isEmpty())
				continue;
			if (s.startsWith("struct")) {
				cur = new ArrayList<>();
				cur.add(s);
			} else if (s.equals("end")) {
				res.add(cur.toArray(new String[0]));
				cur = null;
			} else {
				cur.add(s);
			}
		}
		return res;
	}

	/* ---- decoding as FileStreamSourceTask does ------------------------- */

	/* UTF-8 with each malformed sequence replaced by U+FFFD, counting them:
	 * what CodingErrorAction.REPLACE does, made visible. */
	static String decode(byte[] b, int[] replaced) {
		CharsetDecoder d = StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPORT)
				.onUnmappableCharacter(CodingErrorAction.REPORT);
		ByteBuffer in = ByteBuffer.wrap(b);
		CharBuffer out = CharBuffer.allocate(b.length + 16);
		for (;;) {
			CoderResult r = d.decode(in, out, true);
			if (r.isUnderflow())
				break;
			if (r.isOverflow()) {
				out = grow(out);
			} else {
				if (out.remaining() < 1)
					out = grow(out);
				out.put('\uFFFD');
				in.position(in.position() + r.length());
				replaced[0]++;
			}
		}
		while (d.flush(out).isOverflow())
			out = grow(out);
		return out.flip().toString();
	}

	static CharBuffer grow(CharBuffer b) {
		CharBuffer n = CharBuffer.allocate(b.capacity() * 2 + 16);
		return n.put(b.flip());
	}

	/* What FileStreamSourceTask's InputStreamReader makes of the bytes. */
	static String readerDecode(byte[] b) throws IOException {
		StringBuilder sb = new StringBuilder();
		char[] buf = new char[8192];
		try (Reader r = new InputStreamReader(new ByteArrayInputStream(b), StandardCharsets.UTF_8)) {
			for (int n; (n = r.read(buf)) > 0;)
				sb.append(buf, 0, n);
		}
		return sb.toString();
	}

	/* The lines without CR and LF, as one file separated in turn by \n, \r\n
	 * and \r, through the real FileStreamSourceTask. */
	static void fileTaskCheck(List<byte[]> lines, List<String> decoded, Path tmp) throws Exception {
		java.io.ByteArrayOutputStream file = new java.io.ByteArrayOutputStream();
		List<String> want = new ArrayList<>();
		String[] seps = {"\n", "\r\n", "\r"};
		String sep = "";
		for (int i = 0; i < lines.size(); i++) {
			byte[] l = lines.get(i);
			boolean eol = false;
			for (byte c : l)
				eol |= c == '\n' || c == '\r';
			if (eol)
				continue;
			file.writeBytes(sep.getBytes(StandardCharsets.US_ASCII));
			file.writeBytes(l);
			sep = seps[want.size() % 3];
			want.add(decoded.get(i));
		}
		file.writeBytes("\n".getBytes(StandardCharsets.US_ASCII));
		Path f = tmp.resolve("filetask.txt");
		Files.write(f, file.toByteArray());

		FileStreamSourceTask task = new FileStreamSourceTask();
		task.initialize(new SourceTaskContext() {
			public Map<String, String> configs() {
				return Map.of();
			}

			public OffsetStorageReader offsetStorageReader() {
				return new OffsetStorageReader() {
					public <T> Map<String, Object> offset(Map<String, T> partition) {
						return null;
					}

					public <T> Map<Map<String, T>, Map<String, Object>> offsets(
							Collection<Map<String, T>> partitions) {
						return new HashMap<>();
					}
				};
			}
		});
		task.start(Map.of("file", f.toString(), "topic", TOPIC, "batch.size", "100000"));
		List<SourceRecord> got = new ArrayList<>();
		for (int polls = 0; got.size() < want.size() && polls < 100; polls++) {
			List<SourceRecord> rs = task.poll();
			if (rs != null)
				got.addAll(rs);
		}
		task.stop();
		if (got.size() != want.size())
			throw new IllegalStateException("FileStreamSourceTask gave " + got.size() + " records, want " + want.size());
		for (int i = 0; i < got.size(); i++) {
			SourceRecord r = got.get(i);
			if (r.key() != null || r.keySchema() != null || r.valueSchema() != Schema.STRING_SCHEMA
					|| !want.get(i).equals(r.value()))
				throw new IllegalStateException("FileStreamSourceTask record " + i + " differs: " + r);
		}
	}

	/* ---- structs ------------------------------------------------------- */

	static Map<String, String> options(String[] toks, int from, List<String> rest) {
		Map<String, String> o = new HashMap<>();
		for (int i = from; i < toks.length; i++) {
			int eq = toks[i].indexOf('=');
			if (eq > 0)
				o.put(toks[i].substring(0, eq), toks[i].substring(eq + 1));
			else if (toks[i].equals("optional"))
				o.put("optional", "");
			else
				rest.add(toks[i]);
		}
		return o;
	}

	static String text(String hexValue) {
		return decode(hex(hexValue), new int[1]);
	}

	static SchemaBuilder fieldSchema(String type) {
		switch (type) {
		case "int8": return SchemaBuilder.int8();
		case "int16": return SchemaBuilder.int16();
		case "int32": return SchemaBuilder.int32();
		case "int64": return SchemaBuilder.int64();
		case "float32": return SchemaBuilder.float32();
		case "float64": return SchemaBuilder.float64();
		case "boolean": return SchemaBuilder.bool();
		case "string": return SchemaBuilder.string();
		case "bytes": return SchemaBuilder.bytes();
		case "timestamp": return Timestamp.builder();
		case "date": return org.apache.kafka.connect.data.Date.builder();
		case "time": return org.apache.kafka.connect.data.Time.builder();
		default: throw new IllegalArgumentException("unknown type " + type);
		}
	}

	static Object fieldValue(String type, List<String> v) {
		String s = v.get(0);
		if (s.equals("null"))
			return null;
		switch (type) {
		case "int8": return Byte.parseByte(s);
		case "int16": return Short.parseShort(s);
		case "int32": return Integer.parseInt(s);
		case "int64": return Long.parseLong(s);
		case "float32": return Float.parseFloat(s);
		case "float64": return Double.parseDouble(s);
		case "boolean": return Boolean.parseBoolean(s);
		case "string": return decode(hexTokens(v), new int[1]);
		case "bytes": return hexTokens(v);
		case "timestamp": return new java.util.Date(Long.parseLong(s));
		case "date": return new java.util.Date(Long.parseLong(s) * 86400000L);
		case "time": return new java.util.Date(Long.parseLong(s));
		default: throw new IllegalArgumentException("unknown type " + type);
		}
	}

	static Struct buildStruct(String[] desc) {
		String[] head = desc[0].split("\\s+");
		Map<String, String> o = options(head, 1, new ArrayList<>());
		SchemaBuilder sb = SchemaBuilder.struct();
		List<Object> values = new ArrayList<>();

		if (o.containsKey("name"))
			sb.name(o.get("name"));
		if (o.containsKey("version"))
			sb.version(Integer.parseInt(o.get("version")));
		if (o.containsKey("doc"))
			sb.doc(text(o.get("doc")));
		if (o.containsKey("optional"))
			sb.optional();
		for (int i = 1; i < desc.length; i++) {
			String[] t = desc[i].split("\\s+");
			List<String> val = new ArrayList<>();
			Map<String, String> fo = options(t, 4, val);
			SchemaBuilder fs = fieldSchema(t[2]);
			if (!t[0].equals("field") || !(t[3].equals("required") || t[3].equals("optional")))
				throw new IllegalArgumentException("bad field line: " + desc[i]);
			if (t[3].equals("optional"))
				fs.optional();
			if (fo.containsKey("doc"))
				fs.doc(text(fo.get("doc")));
			sb.field(t[1], fs.build());
			values.add(fieldValue(t[2], val));
		}
		Schema schema = sb.build();
		Struct st = new Struct(schema);
		for (int i = 0; i < values.size(); i++)
			st.put(schema.fields().get(i), values.get(i));
		st.validate();
		return st;
	}

	static boolean hasBytes(Struct st) {
		for (org.apache.kafka.connect.data.Field f : st.schema().fields())
			if (f.schema().type() == Schema.Type.BYTES && st.get(f) != null)
				return true;
		return false;
	}
}
