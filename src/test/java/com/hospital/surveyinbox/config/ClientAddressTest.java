package com.hospital.surveyinbox.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The client address behind trusted proxies, read from the right of X-Forwarded-For; forged entries are never taken. */
class ClientAddressTest {

    static String client(ClientAddress address, String peer, String... forwardedFor) {
        return ClientAddress.key(address.resolve(peer, List.of(forwardedFor)));
    }

    @Test
    void withoutTrustedProxiesTheHeaderIsIgnored() {
        ClientAddress address = new ClientAddress(List.of());
        assertThat(client(address, "127.0.0.1", "10.0.0.5")).isEqualTo("127.0.0.1");
        assertThat(client(address, "10.42.1.7", "10.0.0.5")).isEqualTo("10.42.1.7");
    }

    @Test
    void behindATrustedProxyTheRightmostUntrustedEntryIsTheClient() {
        ClientAddress address = new ClientAddress(List.of("10.42.0.0/16", "fd00::/8"));
        // nginx appended the attacker's real address to what the attacker forged
        assertThat(client(address, "10.42.1.7", "10.0.0.5, 192.0.2.9")).isEqualTo("192.0.2.9");
        // two proxies in a row, the header split over two lines
        assertThat(client(address, "10.42.1.7", "10.0.0.5", "192.0.2.9, 10.42.3.3")).isEqualTo("192.0.2.9");
        // a peer outside the trusted range: its header counts for nothing
        assertThat(client(address, "192.0.2.50", "10.0.0.5")).isEqualTo("192.0.2.50");
        // a host name or garbage on the right: the last trusted hop is all that is known (and no DNS lookup)
        assertThat(client(address, "10.42.1.7", "10.0.0.5, evil.example")).isEqualTo("10.42.1.7");
        assertThat(client(address, "10.42.1.7", "unknown")).isEqualTo("10.42.1.7");
        // a load balancer that appends the port; a bracketed IPv6 with its port
        assertThat(client(address, "10.42.1.7", "10.0.0.5, 192.0.2.9:5678")).isEqualTo("192.0.2.9");
        assertThat(client(address, "10.42.1.7", "[2001:db8:1:2::1]:443")).isEqualTo("2001:db8:1:2:0:0:0:0/64");
        // a name made of hex letters and dots is no address (never looked up in DNS)
        assertThat(ClientAddress.parse("a.bad.dead.cafe")).isNull();
        assertThat(ClientAddress.parse("face")).isNull();
        // no header at all: the proxy itself
        assertThat(client(address, "10.42.1.7")).isEqualTo("10.42.1.7");
    }

    @Test
    void ipv6ClientsAreKeyedByTheirSlash64() {
        ClientAddress address = new ClientAddress(List.of("10.42.0.0/16"));
        assertThat(client(address, "10.42.1.7", "2001:db8:1:2:aaaa::1"))
                .isEqualTo(client(address, "10.42.1.7", "[2001:db8:1:2:bbbb::9]"))
                .endsWith("/64");
        assertThat(client(address, "10.42.1.7", "2001:db8:1:3::1")).isNotEqualTo(client(address, "10.42.1.7", "2001:db8:1:2::1"));
    }

    @Test
    void rangesAreParsedStrictly() {
        assertThat(ClientAddress.Cidr.parse("0.0.0.0/0").tooBroad()).isTrue();
        assertThat(ClientAddress.Cidr.parse("::/0").tooBroad()).isTrue();
        assertThat(ClientAddress.Cidr.parse("0.0.0.0/1").tooBroad()).isTrue();
        assertThat(ClientAddress.Cidr.parse("128.0.0.0/1").tooBroad()).isTrue();
        assertThat(ClientAddress.Cidr.parse("10.0.0.0/8").tooBroad()).isFalse();
        assertThat(ClientAddress.Cidr.parse("10.42.0.0/16").contains(ClientAddress.parse("10.42.255.1"))).isTrue();
        assertThat(ClientAddress.Cidr.parse("10.42.0.0/16").contains(ClientAddress.parse("10.43.0.1"))).isFalse();
        assertThat(ClientAddress.Cidr.parse("127.0.0.1").contains(ClientAddress.parse("127.0.0.2"))).isFalse();
        assertThat(ClientAddress.Cidr.parse("10.42.0.0/16").contains(ClientAddress.parse("fd00::1"))).isFalse();
        assertThatThrownBy(() -> ClientAddress.Cidr.parse("ingress.local/16")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ClientAddress.Cidr.parse("10.0.0.0/33")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ClientAddress.Cidr.parse("10.0.0.0/x")).isInstanceOf(IllegalArgumentException.class);
    }
}
