// The offsets-topic key and value Kafka Connect 3.9 writes for Confluent's
// JDBC source (kafka-connect-jdbc 10.9), one line per mode: "name key value".
//
// The maps are built the way the connector builds them (read from its source,
// not copied): a table's partition is a HashMap holding "table" (the plain
// name: SQLite has neither catalog nor schema) and then "protocol" = "1"; in
// bulk mode and for a query the partition is a singleton map ("table" or
// "query" = "query"). The offset is a HashMap(3) filled with "incrementing",
// then "timestamp" (java.sql.Timestamp.getTime(), ms) and "timestamp_nanos"
// (getNanos(), the nanoseconds within the second), each only when the mode
// tracks it; bulk records carry no offset (null). Connect serialises the key
// [connector, partition] and the offset with a JsonConverter whose
// schemas.enable is false, as its internal converters are configured.
//
// Usage: java -Duser.timezone=UTC -cp 'connect-3.9.1/libs/*' JdbcOffsets.java
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.connect.json.JsonConverter;

public class JdbcOffsets {
    static final String CONNECTOR = "jdbc-sqlite";
    static final String TABLE = "t";
    static final long ID = 42L;
    static final Timestamp TS = Timestamp.valueOf("2024-03-01 12:34:56.123456789");

    static JsonConverter converter(boolean key) {
        JsonConverter c = new JsonConverter();
        c.configure(Collections.singletonMap("schemas.enable", "false"), key);
        return c;
    }

    static Map<String, String> tablePartition() {
        Map<String, String> p = new HashMap<>();
        p.put("table", TABLE);
        p.put("protocol", "1");
        return p;
    }

    static Map<String, Object> offset(boolean inc, boolean ts) {
        Map<String, Object> o = new HashMap<>(3);
        if (inc)
            o.put("incrementing", ID);
        if (ts) {
            o.put("timestamp", TS.getTime());
            o.put("timestamp_nanos", (long) TS.getNanos());
        }
        return o;
    }

    static void line(String name, Map<String, ?> partition, Map<String, Object> offset) {
        byte[] k = converter(true).fromConnectData("", null, Arrays.asList(CONNECTOR, partition));
        byte[] v = converter(false).fromConnectData("", null, offset);
        System.out.println(name + " " + new String(k, StandardCharsets.UTF_8) + " "
                + (v == null ? "null" : new String(v, StandardCharsets.UTF_8)));
    }

    public static void main(String[] args) {
        Map<String, String> query = Collections.singletonMap("query", "query");
        line("bulk", Collections.singletonMap("table", TABLE), null);
        line("incrementing", tablePartition(), offset(true, false));
        line("timestamp", tablePartition(), offset(false, true));
        line("timestamp+incrementing", tablePartition(), offset(true, true));
        line("query-bulk", query, null);
        line("query-incrementing", query, offset(true, false));
        line("query-timestamp+incrementing", query, offset(true, true));
    }
}
