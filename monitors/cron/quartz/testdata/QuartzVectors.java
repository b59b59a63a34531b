// QuartzVectors writes the test vectors of package quartz: what Java
// Quartz's own CronExpression (Debian's libquartz2-java, Quartz 2.3.2)
// accepts and rejects, and the fire times a Quartz scheduler runs around
// every 2026 daylight-saving transition of the zones the tests cover.
// Regenerate with (from this directory):
//
//	javac -cp /usr/share/java/quartz2.jar -d /tmp QuartzVectors.java
//	java -cp /tmp:/usr/share/java/quartz2.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar \
//	    QuartzVectors > vectors.json
//
// A Quartz trigger computes each fire time as getTimeAfter of the previous
// one (CronTriggerImpl.getFireTimeAfter), so each series here is that
// chain, started from a fixed instant.
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.zone.ZoneOffsetTransition;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;
import org.quartz.CronExpression;

public class QuartzVectors {
    static final String[] ZONES = {
        "America/New_York", "Europe/London", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe",
        "Pacific/Chatham", "America/Santiago", "America/Havana", "Asia/Kolkata", "UTC",
    };

    // Daily and sub-daily expressions: a series around each transition.
    static final String[] DST_EXPRS = {
        "0 30 2 * * ?", "0 0 2 * * ?", "0 30 1 * * ?", "0 0 1 * * ?", "0 45 1 * * ?", "0 0 3 * * ?",
        "0 0 0 * * ?", "0 30 0 * * ?", "0 30 23 * * ?", "0 0 * * * ?", "0 */15 * * * ?", "0 0/20 1-3 * * ?",
        "0 0 0/2 * * ?", "0 15 2 ? * SUN", "0 30 2 ? * 1#2", "0 0 2 ? * 1", "0 0 9-17 ? * MON-FRI",
        "0 0 22-2 * * ?", "30 5/10 * * * ?", "0 0 2 ? * 7", "0 30 2 ? * 1L", "0 0 0 ? * SUN",
        "0 30 1 ? * SUN", "0 0 2-3 * * ?", "0 0,30 * * * ?", "0 0 12 * * ?", "15 30 2 * * ?",
    };

    // Day and month rules: a series through 2026 and 2027.
    static final String[] CALENDAR_EXPRS = {
        "0 0 12 L * ?", "0 0 12 LW * ?", "0 0 12 L-3 * ?", "0 0 12 L-3W * ?", "0 0 12 15W * ?", "0 0 12 1W * ?",
        "0 0 12 31W * ?", "0 0 12 ? * 6L", "0 0 12 ? * 2#1", "0 0 12 ? * 6#5", "0 0 12 ? * FRI-MON",
        "0 0 0 1 1/3 ?", "0 0 0 29 2 ?", "0 0 12 * * ? 2026-2027", "0 0 2 ? * L", "0 0 12 1,15 * ?",
        "0 0 12 ? JAN-MAR,NOV MON", "0 0 12 1-10/3 * ?", "0 0 12 ? * 2-6/2", "0 0 12 ? * MON#3",
        "0 0 12 ? * 3/2", "0 0 12 5/10 * ?", "0 0 12 ? NOV-FEB 2", "0 0 12 ? * SAT-SUN", "0 0 12 ? * 1,7",
        "0 0 12 ? * 5L 2026", "0 15 10 ? * 6L 2026-2027", "0 0 12 L * ? 2027", "0 0 0 ? 2 2#5",
        "0 0 12 ? * fri", "0 0 12 ? * 7/3", "0 0 12 20-5 * ?", "0 0 12 ? 11-2 1", "0 30 2 ? * 1#2",
    };

    // Syntax only: accepted or not (with Quartz's message).
    static final String[] SYNTAX = {
        "0 0 12 * * ?", "0 0 12 ? * *", "0 0 12 * * *", "0 0 12 ? * ?", "0 12 * * ?", "0 0 12 ? * 0",
        "0 0 12 ? * 8", "0 0 12 L,15 * ?", "0 0 12 ? * 1#6", "0 0 24 * * ?", "0 60 * * * ?", "0 0 12 32 * ?",
        "0 0 12 ? 13 *", "0 0 12 ? * MON#2", "0 0/61 * * * ?", "0 0 12 32W * ?", "0 0 12 L-31 * ?",
        "0 0 12 ? * 5L", "0 0 12 ? * 5L,6L", "0 0 12 ? * 1#1,2#2", "60 0 12 * * ?", "0 0 12 ? * MON-XYZ",
        "0 0 12 ? JAN-DEC *", "0 0 12 * * ? 2026 1", "0 0 12 W * ?", "0 0 12 ? * L", "0 0 12 ? * 2/8",
        "0 0 12 1/32 * ?", "0 0/60 * * * ?", "*/5 * * * * ?", "0 0 12 ? * MON,WED,FRI", "0 0 12 ?5 * *",
        "0 0 12 1-5 * ? *", "@daily", "0 0 2 * *", "0 0 12 LW,1 * ?", "0 0 12 ? * 1-7", "0 0 12 ? * 3-1",
        "0 0 12 15-10 * ?", "0 0 12 ? * L-2", "0 0 12 ? 0 *", "0 0 -1 * * ?", "a 0 12 * * ?", "0 0 12 * * ? 2200",
    };

    static final DateTimeFormatter RFC3339 = DateTimeFormatter.ISO_OFFSET_DATE_TIME;

    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder();
        out.append("{\"quartz\": \"").append(new java.io.File(CronExpression.class.getProtectionDomain().getCodeSource().getLocation().getPath())
           .getCanonicalFile().getName())
           .append("\", \"java\": \"").append(System.getProperty("java.version")).append("\",\n \"syntax\": [\n");
        for (int i = 0; i < SYNTAX.length; i++) {
            String err = null;
            try {
                new CronExpression(SYNTAX[i]);
            } catch (Exception e) {
                err = e.getMessage();
            }
            out.append("  {\"expr\": ").append(quote(SYNTAX[i])).append(", \"valid\": ").append(err == null);
            if (err != null) out.append(", \"error\": ").append(quote(err));
            out.append(i + 1 < SYNTAX.length ? "},\n" : "}\n");
        }
        out.append(" ],\n \"series\": [\n");
        List<String> series = new ArrayList<>();
        for (String zone : ZONES) {
            ZoneId zid = ZoneId.of(zone);
            List<Instant> starts = new ArrayList<>();
            Instant t = ZonedDateTime.of(2026, 1, 1, 0, 0, 0, 0, zid).toInstant();
            Instant end = ZonedDateTime.of(2027, 1, 1, 0, 0, 0, 0, zid).toInstant();
            ZoneOffsetTransition tr;
            while ((tr = zid.getRules().nextTransition(t)) != null && tr.getInstant().isBefore(end)) {
                starts.add(tr.getInstant());
                t = tr.getInstant();
            }
            if (starts.isEmpty()) { // Asia/Kolkata, UTC: a day like the others
                starts.add(ZonedDateTime.of(2026, 3, 8, 2, 0, 0, 0, zid).toInstant());
            }
            for (String expr : DST_EXPRS) {
                for (Instant at : starts) {
                    series.add(series(expr, zone, at.minusSeconds(36 * 3600), at.plusSeconds(36 * 3600), 400));
                }
            }
            if (zone.equals("Europe/Berlin") || zone.equals("America/New_York") || zone.equals("UTC")) {
                for (String expr : CALENDAR_EXPRS) {
                    Instant from = ZonedDateTime.of(2025, 12, 31, 12, 0, 0, 0, zid).toInstant();
                    series.add(series(expr, zone, from, ZonedDateTime.of(2028, 1, 1, 0, 0, 0, 0, zid).toInstant(), 120));
                }
            }
        }
        out.append(String.join(",\n", series)).append("\n ]\n}\n");
        System.out.print(out);
    }

    static String series(String expr, String zone, Instant from, Instant until, int max) throws Exception {
        CronExpression ce = new CronExpression(expr);
        ce.setTimeZone(TimeZone.getTimeZone(zone));
        ZoneId zid = ZoneId.of(zone);
        StringBuilder b = new StringBuilder();
        b.append("  {\"expr\": ").append(quote(expr)).append(", \"tz\": ").append(quote(zone))
         .append(", \"from\": ").append(quote(RFC3339.format(from.atZone(zid)))).append(", \"next\": [");
        Date d = Date.from(from);
        for (int i = 0; i < max; i++) {
            d = ce.getTimeAfter(d);
            if (d == null || d.toInstant().isAfter(until)) break;
            if (i > 0) b.append(", ");
            b.append(quote(RFC3339.format(d.toInstant().atZone(zid))));
        }
        return b.append("]}").toString();
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\');
            if (c < 0x20) b.append(String.format("\\u%04x", (int) c)); else b.append(c);
        }
        return b.append('"').toString();
    }
}
