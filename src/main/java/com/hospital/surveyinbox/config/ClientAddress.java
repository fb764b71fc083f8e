package com.hospital.surveyinbox.config;

import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.regex.Pattern;
import org.springframework.stereotype.Component;

/**
 * Who a request comes from, for the failed-authentication limit. The socket's peer, unless that peer is one
 * of {@code adapter.security.trusted-proxies}: then {@code X-Forwarded-For} is read from the right (a proxy
 * appends the address it saw) and the first entry that is not itself a trusted proxy is the client. Whatever
 * a client writes into the header itself stays to the left of what the proxy appended, so a forged
 * address is never taken. Tomcat's own forwarded-header handling is off ({@code server.forward-headers-strategy:
 * none}): it would trust the header from every private address, which on Kubernetes is every pod.
 *
 * <p>IPv6 clients are keyed by their /64: one host has a whole /64 to choose addresses from.
 */
@Component("clientAddress")
public class ClientAddress {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(?:\\.\\d{1,3}){3}");
    private static final Pattern IPV4_WITH_PORT = Pattern.compile("(\\d{1,3}(?:\\.\\d{1,3}){3}):\\d{1,5}");
    private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");
    private static final Pattern BRACKETED_IPV6 = Pattern.compile("\\[([0-9A-Fa-f:.]+)\\](?::\\d{1,5})?");

    private final List<Cidr> trusted;

    @org.springframework.beans.factory.annotation.Autowired
    public ClientAddress(AdapterProperties properties) {
        this(properties.getSecurity().getTrustedProxies());
    }

    ClientAddress(List<String> trustedProxies) {
        this.trusted = trustedProxies.stream().map(Cidr::parse).toList();
    }

    /** The key the limit counts failures under: an IPv4 address, or an IPv6 /64 prefix. */
    public String of(HttpServletRequest request) {
        return key(resolve(request.getRemoteAddr(), request.getHeaders("X-Forwarded-For") == null
                ? List.of() : Collections.list(request.getHeaders("X-Forwarded-For"))));
    }

    /** The client's address given the peer and the X-Forwarded-For header lines (in order received). */
    InetAddress resolve(String peer, List<String> forwardedFor) {
        InetAddress client = parse(peer);
        if (client == null || !isTrusted(client) || forwardedFor.isEmpty()) {
            return client;
        }
        List<String> hops = new ArrayList<>();
        for (String line : forwardedFor) {
            for (String hop : line.split(",")) {
                hops.add(hop.strip());
            }
        }
        for (int i = hops.size() - 1; i >= 0; i--) {
            InetAddress hop = parse(hops.get(i));
            if (hop == null) {
                return client; // unreadable: the last trusted hop is all that is known
            }
            client = hop;
            if (!isTrusted(hop)) {
                return hop;
            }
        }
        return client;
    }

    /** Whether the socket's peer is a trusted proxy (whose forwarded headers count). */
    public boolean isTrustedPeer(String peer) {
        InetAddress address = parse(peer);
        return address != null && isTrusted(address);
    }

    boolean isTrusted(InetAddress address) {
        for (Cidr cidr : trusted) {
            if (cidr.contains(address)) {
                return true;
            }
        }
        return false;
    }

    static String key(InetAddress address) {
        if (address == null) {
            return "unknown";
        }
        byte[] bytes = address.getAddress();
        if (bytes.length == 16) {
            return Cidr.masked(bytes, 64).getHostAddress() + "/64";
        }
        return address.getHostAddress();
    }

    /** An IP literal, never a host name (no DNS lookup for what a client wrote); null otherwise. */
    static InetAddress parse(String text) {
        if (text == null) {
            return null;
        }
        String literal = text.strip();
        java.util.regex.Matcher bracketed = BRACKETED_IPV6.matcher(literal);
        java.util.regex.Matcher withPort = IPV4_WITH_PORT.matcher(literal);
        if (bracketed.matches()) {
            literal = bracketed.group(1); // [2001:db8::1]:443
        } else if (withPort.matches()) {
            literal = withPort.group(1); // 192.0.2.9:5678, as some load balancers append
        }
        // only literals reach InetAddress: a name made of hex letters and dots would be looked up in DNS
        if (!(IPV4.matcher(literal).matches() || (literal.length() <= 45 && IPV6.matcher(literal).matches()))) {
            return null;
        }
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    /** An address range such as {@code 10.42.0.0/16} or {@code fd00::/8}; a bare address is a /32 or /128. */
    record Cidr(byte[] network, int prefix) {

        static Cidr parse(String text) {
            String[] parts = text.strip().split("/", 2);
            InetAddress address = ClientAddress.parse(parts[0]);
            if (address == null) {
                throw new IllegalArgumentException("adapter.security.trusted-proxies: not an IP range: " + text);
            }
            int bits = address.getAddress().length * 8;
            int prefix;
            try {
                prefix = parts.length == 2 ? Integer.parseInt(parts[1]) : bits;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("adapter.security.trusted-proxies: not an IP range: " + text);
            }
            if (prefix < 0 || prefix > bits) {
                throw new IllegalArgumentException("adapter.security.trusted-proxies: prefix out of range: " + text);
            }
            return new Cidr(masked(address.getAddress(), prefix).getAddress(), prefix);
        }

        boolean contains(InetAddress address) {
            byte[] bytes = address.getAddress();
            return bytes.length == network.length && java.util.Arrays.equals(masked(bytes, prefix).getAddress(), network);
        }

        /**
         * Too broad to name a proxy: shorter than /8 (0.0.0.0/1 and 128.0.0.0/1 together are everyone), so
         * X-Forwarded-For would be believed from almost anyone.
         */
        boolean tooBroad() {
            return prefix < 8;
        }

        static InetAddress masked(byte[] bytes, int prefix) {
            byte[] out = bytes.clone();
            for (int i = 0; i < out.length; i++) {
                int keep = Math.max(0, Math.min(8, prefix - i * 8));
                out[i] = (byte) (out[i] & (0xFF << (8 - keep)));
            }
            try {
                return InetAddress.getByAddress(out);
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
