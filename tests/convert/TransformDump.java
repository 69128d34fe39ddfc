import java.io.PrintStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.storage.SimpleHeaderConverter;
import org.apache.kafka.connect.storage.StringConverter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

/**
 * The reference side of tests/convert/transforms.sh: runs Kafka Connect's own
 * transforms and predicates over tests/convert/records.txt, chain by chain
 * of tests/convert/transforms.txt, as Connect's TransformationStage applies
 * them, and prints what the converters make of the result, in the format
 * tests/tools/transformdump.c reproduces from src/transform/.
 *
 * Usage: java -cp LIBS/'*' TransformDump.java CHAINS RECORDS
 *
 * Output, per chain C and record N (bytes as lower-case hex, "null" for a
 * null result, "-" for none):
 *   C N dropped | C N error
 *   C N topic HEX
 *   C N header NAME HEX          SimpleHeaderConverter, in order
 *   C N key json-schema HEX      JsonConverter, schemas.enable=true
 *   C N value json-schema HEX
 *   C N value json HEX           JsonConverter, schemas.enable=false
 *   C N value string HEX         StringConverter
 */
public class TransformDump {
	static final String TOPIC = "skiff-test";

	public static void main(String[] args) throws Exception {
		Map<String, Map<String, String>> chains = readChains(args[0]);
		List<String> records = readRecords(args[1]);
		JsonConverter json = json(false), jsonSchema = json(true), keyJson = json(true);
		StringConverter string = new StringConverter();
		string.configure(Map.of("converter.type", "value"));
		SimpleHeaderConverter hc = new SimpleHeaderConverter();
		StringBuilder out = new StringBuilder();

		for (Map.Entry<String, Map<String, String>> c : chains.entrySet()) {
			for (int i = 0; i < records.size(); i++) {
				String p = c.getKey() + " " + (i + 1) + " ";
				SourceRecord r = record(records.get(i), jsonSchema);
				try {
					r = apply(c.getValue(), r);
				} catch (Exception e) {
					System.err.println(p + e);
					out.append(p).append("error\n");
					continue;
				}
				if (r == null) {
					out.append(p).append("dropped\n");
					continue;
				}
				emit(out, p + "topic", r.topic().getBytes(StandardCharsets.UTF_8));
				for (Header h : r.headers())
					emit(out, p + "header " + h.key(), hc.fromConnectHeader(r.topic(), h.key(), h.schema(), h.value()));
				emit(out, p + "key json-schema", keyJson.fromConnectData(r.topic(), r.keySchema(), r.key()));
				emit(out, p + "value json-schema", jsonSchema.fromConnectData(r.topic(), r.valueSchema(), r.value()));
				emit(out, p + "value json", json.fromConnectData(r.topic(), r.valueSchema(), r.value()));
				emit(out, p + "value string", string.fromConnectData(r.topic(), r.valueSchema(), r.value()));
			}
		}
		PrintStream ps = new PrintStream(System.out, false, StandardCharsets.US_ASCII);
		ps.print(out);
		ps.flush();
	}

	static JsonConverter json(boolean schemas) {
		JsonConverter c = new JsonConverter();
		c.configure(Map.of("schemas.enable", Boolean.toString(schemas), "converter.type", "value"));
		return c;
	}

	/* "line TEXT" (FileStreamSourceTask's record) or "row TS ENVELOPE" (a
	 * schema and payload in JsonConverter's envelope; TS 0: no timestamp). */
	static SourceRecord record(String desc, JsonConverter env) {
		Map<String, ?> part = Map.of("filename", "f"), off = Map.of("position", 0L);
		if (desc.startsWith("line ")) {
			return new SourceRecord(part, off, TOPIC, null, null, null, Schema.STRING_SCHEMA, desc.substring(5));
		}
		String[] t = desc.split(" ", 3);
		long ts = Long.parseLong(t[1]);
		SchemaAndValue v = env.toConnectData(TOPIC, t[2].getBytes(StandardCharsets.UTF_8));
		return new SourceRecord(part, off, TOPIC, null, null, null, v.schema(), v.value(), ts == 0 ? null : ts);
	}

	@SuppressWarnings({"unchecked", "rawtypes"})
	static SourceRecord apply(Map<String, String> props, SourceRecord r) throws Exception {
		Map<String, Predicate> preds = new HashMap<>();
		for (String alias : list(props.get("predicates"))) {
			Predicate p = (Predicate) Class.forName(props.get("predicates." + alias + ".type"))
					.getDeclaredConstructor().newInstance();
			p.configure(sub(props, "predicates." + alias + "."));
			preds.put(alias, p);
		}
		for (String alias : list(props.get("transforms"))) {
			Map<String, String> conf = sub(props, "transforms." + alias + ".");
			Transformation t = (Transformation) Class.forName(conf.get("type")).getDeclaredConstructor().newInstance();
			t.configure(conf);
			Predicate p = conf.containsKey("predicate") ? preds.get(conf.get("predicate")) : null;
			boolean negate = Boolean.parseBoolean(conf.getOrDefault("negate", "false"));
			if (p == null || p.test(r) ^ negate)
				r = (SourceRecord) t.apply(r);
			if (r == null)
				return null;
		}
		return r;
	}

	static List<String> list(String v) {
		List<String> l = new ArrayList<>();
		if (v != null)
			for (String s : v.split(","))
				if (!s.trim().isEmpty())
					l.add(s.trim());
		return l;
	}

	static Map<String, String> sub(Map<String, String> props, String prefix) {
		Map<String, String> m = new HashMap<>();
		for (Map.Entry<String, String> e : props.entrySet())
			if (e.getKey().startsWith(prefix))
				m.put(e.getKey().substring(prefix.length()), e.getValue());
		return m;
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

	/* "chain NAME", then key=value lines, up to "end". */
	static Map<String, Map<String, String>> readChains(String path) throws Exception {
		Map<String, Map<String, String>> res = new LinkedHashMap<>();
		Map<String, String> cur = null;
		for (String l : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8)) {
			if (l.startsWith("#") || l.isBlank())
				continue;
			if (l.startsWith("chain ")) {
				cur = new HashMap<>();
				res.put(l.substring(6).trim(), cur);
			} else if (l.equals("end")) {
				cur = null;
			} else {
				/* A properties line, escapes and all, as skiff reads it. */
				Properties p = new Properties();
				p.load(new StringReader(l));
				for (String k : p.stringPropertyNames())
					cur.put(k, p.getProperty(k));
			}
		}
		return res;
	}

	static List<String> readRecords(String path) throws Exception {
		List<String> res = new ArrayList<>();
		for (String l : Files.readAllLines(Paths.get(path), StandardCharsets.UTF_8))
			if (!l.startsWith("#") && !l.isBlank())
				res.add(l);
		return res;
	}
}
