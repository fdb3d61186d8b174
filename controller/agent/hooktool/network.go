package hooktool

import (
	"errors"
	"fmt"
	"net"
	"slices"
)

// networkInfo is what network-get prints, as Juju 3.6 does: both the current keys
// ("mac-address", "interface-name", "value") and the deprecated ones ("macaddress",
// "interfacename", "address") that older charms read. ops reads "bind-addresses" ->
// "interface-name", "addresses" -> "value" (else "address") and "cidr", "ingress-addresses"
// and "egress-subnets".
type networkInfo struct {
	BindAddresses    []bindAddress `json:"bind-addresses,omitempty" yaml:"bind-addresses,omitempty"`
	EgressSubnets    []string      `json:"egress-subnets,omitempty" yaml:"egress-subnets,omitempty"`
	IngressAddresses []string      `json:"ingress-addresses,omitempty" yaml:"ingress-addresses,omitempty"`
}

type bindAddress struct {
	MACAddress       string             `json:"mac-address" yaml:"mac-address"`
	InterfaceName    string             `json:"interface-name" yaml:"interface-name"`
	Addresses        []interfaceAddress `json:"addresses" yaml:"addresses"`
	OldMACAddress    string             `json:"macaddress" yaml:"macaddress"`
	OldInterfaceName string             `json:"interfacename" yaml:"interfacename"`
}

type interfaceAddress struct {
	Hostname   string `json:"hostname" yaml:"hostname"`
	Value      string `json:"value" yaml:"value"`
	CIDR       string `json:"cidr" yaml:"cidr"`
	OldAddress string `json:"address" yaml:"address"`
}

// hostInterface is the host's interface that carries an address.
type hostInterface struct {
	name, mac, cidr string
}

// findInterface finds the host interface whose subnet holds ip (a variable for tests).
var findInterface = func(ip net.IP) (hostInterface, bool) {
	ifaces, err := net.Interfaces()
	if err != nil {
		return hostInterface{}, false
	}
	var within *hostInterface
	for _, iface := range ifaces {
		addrs, err := iface.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipnet, ok := a.(*net.IPNet)
			if !ok || !ipnet.Contains(ip) {
				continue
			}
			subnet := &net.IPNet{IP: ipnet.IP.Mask(ipnet.Mask), Mask: ipnet.Mask}
			hi := hostInterface{iface.Name, iface.HardwareAddr.String(), subnet.String()}
			if ipnet.IP.Equal(ip) {
				return hi, true
			}
			if within == nil {
				within = &hi
			}
		}
	}
	if within != nil {
		return *within, true
	}
	return hostInterface{}, false
}

// addressInfo describes the unit's address: every binding is in the one space of the unit's
// private address.
func addressInfo(addr string) (networkInfo, error) {
	if addr == "" {
		return networkInfo{}, errors.New("the unit has no address")
	}
	ia := interfaceAddress{Value: addr, OldAddress: addr}
	ip := net.ParseIP(addr)
	if ip == nil {
		// A host name: resolve it as Juju does, keeping the name.
		if ips, err := net.LookupIP(addr); err == nil && len(ips) > 0 {
			ip = ips[0]
			ia = interfaceAddress{Hostname: addr, Value: ip.String(), OldAddress: ip.String()}
		}
	}
	var iface hostInterface
	if ip != nil {
		var found bool
		if iface, found = findInterface(ip); !found && ip.IsLoopback() {
			iface = hostInterface{name: "lo", cidr: "127.0.0.0/8"}
			if ip.To4() == nil {
				iface.cidr = "::1/128"
			}
		}
	}
	ia.CIDR = iface.cidr
	info := networkInfo{
		BindAddresses: []bindAddress{{
			MACAddress: iface.mac, InterfaceName: iface.name, Addresses: []interfaceAddress{ia},
			OldMACAddress: iface.mac, OldInterfaceName: iface.name,
		}},
		IngressAddresses: []string{ia.Value},
	}
	if ip != nil {
		bits := 32
		if ip.To4() == nil {
			bits = 128
		}
		info.EgressSubnets = []string{(&net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)}).String()}
	}
	return info, nil
}

func networkGet(t *invocation) error {
	rel := t.fs.StringP("relation", "r", "", `relation id ("db:3" or "3") whose other end asks`)
	bind := t.fs.Bool("bind-address", false, "print the address the unit should listen on")
	ingress := t.fs.Bool("ingress-address", false, "print the address other units should connect to")
	egress := t.fs.Bool("egress-subnets", false, "print the subnets the unit's traffic comes from")
	primary := t.fs.Bool("primary-address", false, "print the primary address (deprecated)")
	_ = t.fs.MarkHidden("primary-address")
	t.formatFlag()
	if err := t.parse(1); err != nil {
		return err
	}
	binding := t.arg(0)
	if binding == "" {
		return usagef("no binding name specified")
	}
	if *rel != "" {
		id, err := t.relationID(*rel)
		if err != nil {
			return err
		}
		if err := t.checkRelation(*rel, id); err != nil {
			return err
		}
	}
	if !slices.Contains(t.c.Endpoints(), binding) {
		return fmt.Errorf("no network config found for binding %q", binding)
	}
	info, err := addressInfo(t.c.PrivateAddress())
	if err != nil {
		return fmt.Errorf("no addresses attached to space for binding %q: %w", binding, err)
	}
	address := info.BindAddresses[0].Addresses[0].Value
	if *primary {
		if *bind || *ingress || *egress {
			return usagef("--primary-address must be the only flag specified")
		}
		return t.write(address)
	}
	var keys []string
	values := map[string]any{}
	if *bind {
		keys = append(keys, "bind-address")
		values["bind-address"] = address
	}
	if *ingress {
		keys = append(keys, "ingress-address")
		values["ingress-address"] = info.IngressAddresses[0]
	}
	if *egress {
		keys = append(keys, "egress-subnets")
		values["egress-subnets"] = nonNil(info.EgressSubnets)
	}
	switch len(keys) {
	case 0:
		return t.write(info)
	case 1:
		return t.write(values[keys[0]])
	default:
		return t.write(values)
	}
}
